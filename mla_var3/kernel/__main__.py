"""``python -m mla_var3.kernel``: see :mod:`mla_var3.kernel.cli`."""

from mla_var3.kernel.cli import main

raise SystemExit(main())
