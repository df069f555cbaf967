m.ssh_remote_dir = "unterminated
m.ssh_environment = {"a": 
