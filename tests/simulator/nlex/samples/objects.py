# call: f(1)
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


class Empty:
    pass


class Pair:
    __slots__ = ("left", "right")


def f(n):
    p = Point(n, 2)
    ps = [p, Point(3, 4)]
    e = Empty()
    p.x = 5
    pair = Pair()
    pair.left = ps
    return p
