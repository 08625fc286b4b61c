"""The SIMD batch backend: ``*_simd_batch`` loops evaluating W states per iteration in vector
lanes (:mod:`.emit`, templates in ``templates/``), compiled for a chosen CPU (:mod:`.target`),
with in-register transposes for the gather and scatter (:mod:`.transpose`)."""
