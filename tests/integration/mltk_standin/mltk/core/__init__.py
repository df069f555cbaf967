"""`load_mltk_model` of the MLTK stand-in: the model name and log dir rules of MLTK."""
import importlib.util
import os
import sys
import time

from mltk.core.model import DatasetMixin, MltkModel, SshMixin, TrainMixin  # noqa: F401

SpecModel = MltkModel  # the class specs build their model from

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


class NamedModel:
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


def load_spec(path: str, test: bool) -> SpecModel:
    """As MLTK's load_mltk_model_with_path: imports the spec (running it), returns its model,
    then enables test mode."""
    module_spec = importlib.util.spec_from_file_location(model_name(path), path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module
    module_spec.loader.exec_module(module)
    for key in dir(module):
        model = getattr(module, key)
        if isinstance(model, SpecModel):
            model.model_specification_path = path
            if test:
                model.enable_test_mode()
            return model
    raise Exception(f'Model specification file: {path} does not define a MltkModel object')


def load_mltk_model(model: str, test: bool = False, print_not_found_err: bool = False):
    """A spec path (`.py` that exists): the spec is run and its model returned, as MLTK does
    locally. A model NAME: the model of that name; records the call so a test can see that
    the remote MLTK was asked."""
    del print_not_found_err
    if model.endswith('.py') and os.path.isfile(model):
        return load_spec(model, test)
    m = NamedModel(model_name(model, test))
    with open(create_user_dir() + '/load_mltk_model.calls', 'a') as f:
        f.write(f'{time.time():.3f} {m.name} cwd={os.getcwd()}\n')
    return m
