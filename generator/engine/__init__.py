"""The execution layer: everything that makes evcat fast without changing
what it computes.

The stages (load, model, rules, render, writer) are functions of their
inputs. What wraps them lives here, each mechanism in one module:

- ``workers``: worker processes, the one decision whether to start them
  (``worker_count``), garbage-collector tuning and Ctrl-C handling.
"""
