"""Side-by-side benchmarks of impl against torch (and HIPS autograd): see benchmarks/conftest.py."""
