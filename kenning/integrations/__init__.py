"""Installers, one module per agent."""
