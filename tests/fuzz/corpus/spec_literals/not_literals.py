import os
name = "ws"
m.ssh_remote_dir = name
m.ssh_remote_dir = f"~/{name}"
m.ssh_startup_cmds = ["a"] + ["b"]
m.ssh_startup_cmds += ["c"]
m.ssh_environment = dict(os.environ)
m.ssh_download_files = ["%s" % name]
m.ssh_create_venv = not False
m.ssh_unknown = 1
m.ssh_remote_dir: str = "annotated"
m.ssh_upload_files = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
def f():
    self.ssh_remote_dir = 'inside a function'
if True:
	m.ssh_create_venv = True
