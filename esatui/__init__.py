"""esatui: ESAMON-style interval screens for Linux on IBM Z and z/VM."""

__version__ = "0.1.0"
