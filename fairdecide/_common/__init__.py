"""The package's own infrastructure, below every concept: argument validation, result
tables, BLAS threads, defaults, the version, and the optional Dask frame helpers."""
