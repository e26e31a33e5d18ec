"""Day-two verification: what each switch should show once configured, and `fabgen verify`,
which compares that with the switches' saved `show` outputs (each platform's collect files)."""
