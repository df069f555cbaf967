from mltk.core.model import MltkModel, TrainMixin, SshMixin
class MyModel(MltkModel, TrainMixin, SshMixin):
    pass
mltk_model = MyModel()
mltk_model.ssh_remote_dir = "~/utest_ssh_workspace"
mltk_model.ssh_create_venv = True
mltk_model.ssh_environment = dict(TEST="This is a test", CUDA_VISIBLE_DEVICES="-1")
mltk_model.ssh_startup_cmds = ["python3 --version", "echo $TEST > test_startup_cmd.txt"]
mltk_model.ssh_upload_files = ["upload_file.txt|/tmp/upload_file.txt"]
mltk_model.ssh_download_files = ["./test_startup_cmd.txt|~/test_startup_cmd.txt"]
mltk_model.ssh_shutdown_cmds = ['echo "shutting down ..." > shutdown.txt']
