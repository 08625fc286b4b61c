"""Applications on top of the pipeline: the command line (:mod:`.cli`), verification against
independent implementations (:mod:`.verify`), static equilibria (:mod:`.equilibrium`),
inertial-parameter identification (:mod:`.identification`), model summaries
(:mod:`.summary`) and the picture of the kinematic graph (:mod:`.graph_layout`,
:mod:`.graph`)."""
