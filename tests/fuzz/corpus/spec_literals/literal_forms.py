# -*- coding: utf-8 -*-
"""Module docstring with ssh_remote_dir = 'not this one'."""
m = object()
m.ssh_remote_dir = r'C:\raw' 'joined' """triple
quoted"""
m.ssh_environment = {'A': [1, (2, 3), (), ('x',), ('y'), {'b': None}],
                     "B": -5, 'C': +2.5, 'D': - 1e-3, 'E': 0x1F, 'F': 1_000,  # comment
                     'G': True, 'H': False}
m.ssh_upload_files = (
    "dataset/*.csv",   # globs
    'a|b',
)
m.ssh_shutdown_cmds = 'a', 'b',
m.ssh_create_venv = None; m.ssh_download_files = []
m.ssh_startup_cmds = [
    'echo \'quoted\' "twice" \\ \t\n\x41\u00e9\N{BULLET}',
    b'bytes',
]
