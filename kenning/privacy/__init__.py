"""Privacy filters applied before anything is written: tag stripping, secret redaction, exclusion."""
