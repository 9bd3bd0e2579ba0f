/* Work of a fixed size for pevpm's test programs: the same CPU time whatever
 * the rank count. */
static double compute(long steps)
{
    volatile double x = 1.0;
    for (long i = 0; i < steps; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}
