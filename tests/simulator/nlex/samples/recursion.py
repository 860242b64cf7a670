# call: f(3)
def f(n):
    if n == 0:
        return []
    rest = f(n - 1)
    return rest + [n]
