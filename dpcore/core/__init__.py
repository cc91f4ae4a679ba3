"""Shared primitives: privacy accounting, noise, seeding, linear algebra, deadlines, validation."""
