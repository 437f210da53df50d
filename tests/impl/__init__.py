"""Unit tests of impl: each compares impl with torch directly, on what generated programs rarely reach."""
