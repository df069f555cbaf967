m.ssh_environment = dict(A=1, **x)
m.ssh_create_venv = 1 if x else 0\
  
