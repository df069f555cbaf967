"""`load_mltk_model` of the MLTK stand-in: the model name and log dir rules of MLTK."""
import os
import time

from mltk.utils.path import create_user_dir

TEST_SUFFIX = '-test'


def model_name(name: str, test: bool = False) -> str:
    """NAME with a `-test` suffix kept, or NAME-test when `test` is set."""
    name = os.path.basename(name)
    if name.endswith('.py'):
        name = name[:-3]
    if test and not name.endswith(TEST_SUFFIX):
        name += TEST_SUFFIX
    return name


class MltkModel:
    """The attributes of MLTK's MltkModel that `mltk ssh` and the stand-in's train use."""

    def __init__(self, name: str):
        self.name = name
        self.base_name = name[:-len(TEST_SUFFIX)] if name.endswith(TEST_SUFFIX) else name
        self.test_mode_enabled = name.endswith(TEST_SUFFIX)

    @property
    def log_dir(self) -> str:
        """<MLTK_CACHE_DIR or ~/.mltk>/models/<name>, created as MLTK does."""
        return create_user_dir('models/' + self.name)

    @property
    def archive_name(self) -> str:
        return self.name + '.mltk.zip'


def load_mltk_model(model: str, test: bool = False, print_not_found_err: bool = False) -> MltkModel:
    """The model NAME (or spec path); records the call so a test can see it was asked."""
    del print_not_found_err  # the stand-in needs no spec to compute the log dir
    m = MltkModel(model_name(model, test))
    with open(create_user_dir() + '/load_mltk_model.calls', 'a') as f:
        f.write(f'{time.time():.3f} {m.name} cwd={os.getcwd()}\n')
    return m
