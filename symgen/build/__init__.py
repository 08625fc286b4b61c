"""Building generated C: the cffi module, compiled and cached (:mod:`.compiler`), and the
numpy-callable kernels on top of it (:mod:`.wrappers`)."""
