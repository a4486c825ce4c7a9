"""The ``legid demo`` run's report: identified vs truth, ZMP deviation, figures."""
