"""The tree formulation (Jain's spatial operator algebra on the hinge tree), by tenant:

- :mod:`.hinges`: the symbolic hinge tree every recursion works on;
- :mod:`.options`: the generation options (``symgen.Options``) and the frames;
- :mod:`.context`: what every derivation of one model shares (:class:`.context.TreeContext`);
- :mod:`.derivation`: a derivation wrapped into a program (:func:`.derivation.tree_program`);
- the catalogue, one module per kernel family, registered in :mod:`symgen.registry` in this
  order: :mod:`.catalogue_dynamics`, :mod:`.catalogue_loops`, :mod:`.catalogue_derivatives`,
  :mod:`.catalogue_identification`, :mod:`.catalogue_embedding`;
- :mod:`.formulation`: the driver :func:`symgen.generate.generate` calls.
"""
