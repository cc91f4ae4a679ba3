"""Words and views for people: display formats, statements, teaching demos, inspect views."""
