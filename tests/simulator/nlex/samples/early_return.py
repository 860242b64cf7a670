# call: f([4, 6, 7, 8, 9], 7)
def f(xs, target):
    for i, x in enumerate(xs):
        if x == target:
            return i
    return -1
