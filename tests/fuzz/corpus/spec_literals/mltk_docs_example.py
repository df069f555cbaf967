import mltk.core as mltk_core
from mltk.core.model import SshMixin


class MyModel(
    mltk_core.MltkModel,
    mltk_core.TrainMixin,
    mltk_core.DatasetMixin,
    mltk_core.EvaluateClassifierMixin,
    SshMixin,
):
    pass


my_model = MyModel()
my_model.version = 1
my_model.description = 'An example model'
my_model.epochs = 10
my_model.batch_size = 32

my_model.ssh_remote_dir = "workspace"
my_model.ssh_create_venv = True
my_model.ssh_environment = dict(CUDA_VISIBLE_DEVICES="-1")
my_model.ssh_startup_cmds = ["pip3 install tf_keras"]
