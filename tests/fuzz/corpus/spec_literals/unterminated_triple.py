m.ssh_remote_dir = """never
closed