"""solve -> simulate -> select -> repair, as a stream of typed events (see ``events``)."""
