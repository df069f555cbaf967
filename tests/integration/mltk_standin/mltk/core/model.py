"""The classes a model spec builds its model from: enough for the SshMixin of MLTK."""
import os
import sys


class MltkModel:
    """MLTK's MltkModel as far as a spec's ssh settings need it."""

    def __init__(self):
        self._attributes = {}
        # As MLTK: the file that creates the model is its spec (known while it is imported).
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename == __file__:
            frame = frame.f_back
        self.model_specification_path = frame.f_code.co_filename if frame else None
        self.test_mode_enabled = False

    @property
    def name(self) -> str:
        base = os.path.basename(self.model_specification_path or 'model.py')[:-3]
        return base + ('-test' if self.test_mode_enabled else '')

    @property
    def h5_log_dir_path(self) -> str:
        suffix = '.test' if self.test_mode_enabled else ''
        return f'{self.name}{suffix}.h5'

    def enable_test_mode(self):
        self.test_mode_enabled = True


class TrainMixin:
    """Training settings; the stand-in keeps none."""


class DatasetMixin:
    """Dataset settings; the stand-in keeps none."""


def _ssh_property(key: str):
    def get(self):
        return self._attributes.get('ssh.' + key)

    def set(self, value):
        self._attributes['ssh.' + key] = value
    return property(get, set)


class SshMixin:
    """MLTK's SshMixin: ssh_* properties, None until a spec sets them."""
    ssh_remote_dir = _ssh_property('remote_dir')
    ssh_startup_cmds = _ssh_property('startup_cmds')
    ssh_shutdown_cmds = _ssh_property('shutdown_cmds')
    ssh_upload_files = _ssh_property('upload_files')
    ssh_download_files = _ssh_property('download_files')
    ssh_environment = _ssh_property('environment')
    ssh_create_venv = _ssh_property('create_venv')
