"""The intermediate representation and its transforms: expressions (:mod:`.expr`), straight-line
programs (:mod:`.program`), optimisation and scheduling (:mod:`.optimize`), differentiation
(:mod:`.autodiff`) and the splitting of very large programs (:mod:`.splitting`).

The IR knows nothing of models, formulations or C: every stage above builds on it."""
