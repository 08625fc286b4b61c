"""Bridges to peer libraries used for verification (optional dependencies, imported lazily).

``symgen.peers.pinocchio`` needs PyPI ``pin``; import it only where Pinocchio is installed.
"""
