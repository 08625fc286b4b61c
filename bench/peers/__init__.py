"""Peers timed against symgen: MuJoCo, CasADi-generated Pinocchio, sympy.physics.mechanics."""
