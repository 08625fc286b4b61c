"""The C99 backend: the printer (:mod:`.printer`), the emitter of a kernel set's header and
source (:mod:`.emit`, templates in ``templates/``) and the C of the single-call fast path
(:mod:`.fastcall`)."""
