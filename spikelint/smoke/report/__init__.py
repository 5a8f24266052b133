"""What a smoke run shows: ``summary.json`` and its text, and ``report.html`` with the losses drawn."""
