"""The execution layer: everything that makes evcat fast without changing
what it computes.

The stages (load, model, rules, render, writer) are functions of their
inputs. What wraps them lives here, each mechanism in one module:

- ``config``: ``RunConfig``, the settings of one run as one frozen value;
- ``workers``: worker processes, the one decision whether to start them
  (``worker_count``), garbage-collector tuning and Ctrl-C handling;
- ``checks``: how the rules run over a directory (the costly checks on
  workers while the others run here, and their memo);
- ``cache``: parsed files by content, the memo of checks, and what a
  long-running caller (``evcat lsp``) keeps between checks;
- ``store``: the sealed, content-addressed stores of ``.evcat-cache/``
  (parsed files, the memo of checks, rendered units, compiled templates):
  entries verified against their seal, written atomically, never through a
  planted link, read with ``marshal`` (no code runs from the cache).
"""
