"""MLTK's user directory rules (mltk/utils/path.py), reduced to what the stand-in needs."""
import os


def fullpath(path: str, cwd: str = None) -> str:
    """An absolute, normalised path with ~ and $VARS expanded."""
    path = os.path.expandvars(os.path.expanduser(path))
    if not os.path.isabs(path):
        path = os.path.join(cwd or os.getcwd(), path)
    return os.path.normpath(path).replace('\\', '/')


def create_user_dir(suffix: str = '', base_dir: str = None) -> str:
    """Creates and returns $MLTK_CACHE_DIR[/suffix] (MLTK: ${MLTK_CACHE_DIR:-~/.mltk})."""
    if suffix:
        suffix = suffix.replace('\\', '/')
        if not suffix.startswith('/'):
            suffix = '/' + suffix
    if not base_dir and not os.environ.get('MLTK_CACHE_DIR'):
        # MLTK would use ~/.mltk; in a test that is the real home of the user running it.
        raise RuntimeError('MLTK stand-in: MLTK_CACHE_DIR is not set (the stand-in never '
                           'writes to the real ~/.mltk)')
    user_dir = base_dir if base_dir else os.environ['MLTK_CACHE_DIR']
    user_dir = fullpath(user_dir + suffix)
    os.makedirs(user_dir, exist_ok=True)
    return user_dir
