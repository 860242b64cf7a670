"""Prediction exercises: students predict steps of a real trace, checked at once, the class live."""
