def scale(x):
    return x * 10


def total(xs):
    acc = 0
    for x in xs:
        acc += scale(x)
        print(acc)
    return acc
