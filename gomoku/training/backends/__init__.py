"""Who plays a run's games: ``Actors`` (actors.py) over the trainer's own process, worker
processes on this machine (pool.py, with inference.py's server for their leaves) or Ray actors
(ray_backend.py; ray_session.py starts or joins Ray). worker.py is one worker, built once from a
``WorkerSpec``; messages.py holds what the trainer and its workers say to each other.

The backends run the loop's games (gomoku.training.selfplay, gomoku.training.evaluation); the
loop's pipeline picks one (``make_actors``). Import the modules themselves; this package imports
nothing.
"""
