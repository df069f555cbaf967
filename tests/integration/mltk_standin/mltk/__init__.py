"""MLTK stand-in for mlt's integration tests: the few entry points `mltk ssh` relies on."""
__version__ = '0.0.0+standin'
MLTK_DIR = __path__[0]
