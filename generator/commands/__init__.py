"""The commands of ``evcat`` (cli.py parses the command line and calls them):
each puts the stages (loader -> model -> rules -> render -> writer) and the
execution layer (engine/) together for one job: ``lint``, ``generate``,
``validate``, ``diff`` (with ``gitsource`` for ``git:`` references),
``serve``, ``send`` and ``init``. ``evcat lsp`` is the package ``lsp/``."""
