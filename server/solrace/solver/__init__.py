"""What the solver adds: its worker process, the jobs fed to it, hints and par, the private pool of
winnable deals, the catalogues.
"""
