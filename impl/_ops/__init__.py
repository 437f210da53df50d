"""impl's op machinery (the op table, codegen) and the op declarations with their kernels."""
