"""Test doubles that speak real protocols: a fake Ollama server and its scripted brains.

They live in the package (not under ``tests/``) because the story runner, the benchmarks and
the notebooks use them too, so a machine without Ollama can still run the whole stack.

The process launchers (:mod:`.postgres`, :mod:`.chroma_server`, :mod:`.serve_process`, with
:mod:`.processes`) stay here for the same reason: ``bench/overhead.py``, ``bench/scale.py``
and ``bench/history_growth.py`` start servers with them as the tests do, and a benchmark
runs as a script from ``bench/``, where ``tests`` is not importable. They import nothing
until called, start only Debian's ``postgres``, the ``chroma`` the package already depends
on, or ``local2 serve``, on 127.0.0.1, and nothing in the package imports this kit.
"""
