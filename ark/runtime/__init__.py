"""Run-time plumbing of tool-using runs: the records (``records``), their packed on-disk form (``trajectory_file``),
tools and their dispatch (``tools``), the tool-calling loop (``loop``) and Ctrl-C handling (``interrupts``).
File writing lives one layer down, in :mod:`ark.storage`."""
