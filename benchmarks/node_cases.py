"""What the 16-core node validation runs: shared by its measure and analyse phases.

>>> from node_cases import SCALE
>>> SCALE
(64, 256, 1024)
"""

#: The case studies traced for extraction, and the section the models describe.
TRACED = ("jacobi", "bag_of_tasks")
SECTION = ("MPI_Barrier", "MPI_Gather")
#: FFT iterations per real run: about a second on one core of the node (the
#: case study's default 200 gave runs of 0.04-0.3 s there, too short to time).
FFT_ITERATIONS = 1000

#: The tutorial's CG: grid and iterations (about 1.5 s on one quiet core).
CG_ARGS = ["--nx", "512", "--ny", "512", "--iterations", "1000"]
CG_ROWS = "32,64,128,256,512"
#: Counts beyond the node at which extracted and hand-written models are compared.
SCALE = (64, 256, 1024)
