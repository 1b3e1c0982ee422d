"""The launch games, one small module each."""
