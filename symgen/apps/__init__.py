"""Applications on top of the pipeline: the command line (:mod:`.cli`), verification against
independent implementations (:mod:`.verify`), static equilibria (:mod:`.equilibrium`),
inertial-parameter identification (:mod:`.identification`) and model summaries
(:mod:`.summary`)."""
