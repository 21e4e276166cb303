"""An mpi4py program (Debian's python3-mpi4py): Python loads libmpi with dlopen only when it imports
mpi4py.MPI, long after liblongpipe.so was preloaded. 4 ranks, sites {0,1} {2,3} (run_front_end.sh,
scenario mpi4py). Every rank notes its lines; rank 0 prints them rank by rank, so the transcript
does not depend on timing and must be the same with and without LongPipe.

Covers: blocking and nonblocking point-to-point to the other site and inside the site, MPI_ANY_SOURCE
receives over both paths (status source, tag, count), Ssend and Issend (not complete before the
receive is posted), pickled objects (mpi4py's recv probes with Mprobe/Mrecv), Probe/Iprobe, Sendrecv,
numpy buffers with a derived type (MPI.INT.Create_vector: the gaps stay untouched), Waitall over both
paths, a split communicator, and collectives (Barrier, Bcast, Allreduce, Gather, Allgather,
Alltoall, Scan).
"""
from mpi4py import MPI
import numpy

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
assert size == 4, "run with 4 ranks"
OTHER_SITE = (rank + 2) % 4  # sites {0,1} {2,3}
SAME_SITE = rank ^ 1
lines = []


def note(text):
    lines.append(f"rank {rank}: {text}")


# Point-to-point with numpy buffers, to the other site and inside the site.
data = numpy.arange(10, dtype="i") + 100 * rank
comm.Send([data, MPI.INT], dest=OTHER_SITE, tag=1)
comm.Send([data, MPI.INT], dest=SAME_SITE, tag=2)
got = numpy.zeros(10, dtype="i")
status = MPI.Status()
comm.Recv([got, MPI.INT], source=OTHER_SITE, tag=1, status=status)
note(f"from other site {status.Get_source()} tag {status.Get_tag()} count {status.Get_count(MPI.INT)}: {got.tolist()}")
comm.Recv([got, MPI.INT], source=SAME_SITE, tag=2)
note(f"from same site: {got.tolist()}")

# Order: 50 messages to the other site, received in order (also through MPI_ANY_SOURCE).
ORDER = 50
requests = [comm.Isend([numpy.array([i], dtype="i"), MPI.INT], dest=OTHER_SITE, tag=3) for i in range(ORDER)]
received = []
for _ in range(ORDER):
    one = numpy.zeros(1, dtype="i")
    comm.Recv([one, MPI.INT], source=MPI.ANY_SOURCE, tag=3)
    received.append(int(one[0]))
MPI.Request.Waitall(requests)
note(f"{ORDER} messages in order: {received == list(range(ORDER))}")

# MPI_ANY_SOURCE at rank 0 from every other rank (two at the other site, one at its own).
if rank == 0:
    seen = []
    for _ in range(3):
        buf = numpy.zeros(4, dtype="d")
        comm.Recv([buf, MPI.DOUBLE], source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
        seen.append((status.Get_source(), status.Get_tag(), status.Get_count(MPI.DOUBLE), buf.tolist()))
    for source, tag, count, values in sorted(seen):
        note(f"any source: from {source} tag {tag} count {count}: {values}")
else:
    comm.Send([numpy.full(rank + 1, rank / 4.0), MPI.DOUBLE], dest=0, tag=10 + rank)

# Ssend to the other site; Issend is not complete before the receiver posts its receive.
if rank == 0:
    comm.Ssend([numpy.array([7, 8, 9], dtype="i"), MPI.INT], dest=2, tag=4)
    request = comm.Issend([numpy.array([11], dtype="i"), MPI.INT], dest=3, tag=5)
    note(f"Issend complete before the receive was posted: {request.Test()}")
    comm.Barrier()
    request.Wait()
    note("Issend complete after the receive")
elif rank == 2:
    buf = numpy.zeros(3, dtype="i")
    comm.Recv([buf, MPI.INT], source=0, tag=4)
    note(f"Ssend received: {buf.tolist()}")
    comm.Barrier()
elif rank == 3:
    comm.Barrier()
    buf = numpy.zeros(1, dtype="i")
    comm.Recv([buf, MPI.INT], source=0, tag=5)
    note(f"Issend received: {buf.tolist()}")
else:
    comm.Barrier()

# Pickled objects: recv of unknown size (Mprobe + Mrecv), from any source.
comm.send({"from": rank, "items": list(range(rank + 2))}, dest=OTHER_SITE, tag=6)
message = comm.recv(source=MPI.ANY_SOURCE, tag=6, status=status)
note(f"object from {status.Get_source()}: {message}")

# Probe and Iprobe before receiving.
comm.Send([numpy.arange(rank + 3, dtype="i"), MPI.INT], dest=OTHER_SITE, tag=7)
comm.Probe(source=MPI.ANY_SOURCE, tag=7, status=status)
count = status.Get_count(MPI.INT)
note(f"probed from {status.Get_source()}: {count} ints; Iprobe then: {comm.Iprobe(source=status.Get_source(), tag=7)}")
buf = numpy.zeros(count, dtype="i")
comm.Recv([buf, MPI.INT], source=status.Get_source(), tag=7)
note(f"probed message: {buf.tolist()}")

# Sendrecv across the sites.
out = numpy.array([rank * 10], dtype="i")
into = numpy.zeros(1, dtype="i")
comm.Sendrecv([out, MPI.INT], dest=OTHER_SITE, sendtag=8, recvbuf=[into, MPI.INT], source=OTHER_SITE, recvtag=8)
note(f"sendrecv: {into.tolist()}")

# A derived type through numpy buffers: every third int of 12, sent and received as the vector.
vector = MPI.INT.Create_vector(4, 1, 3).Commit()
source = numpy.arange(12, dtype="i") + 1000 * rank
target = numpy.full(12, -1, dtype="i")
request_out = comm.Isend([source, 1, vector], dest=OTHER_SITE, tag=9)
request_in = comm.Irecv([target, 1, vector], source=OTHER_SITE, tag=9)
MPI.Request.Waitall([request_out, request_in])
note(f"vector received (gaps stay -1): {target.tolist()}")
vector.Free()

# Waitall over requests of both paths.
outs = [comm.Isend([numpy.array([rank, peer], dtype="i"), MPI.INT], dest=peer, tag=11) for peer in (OTHER_SITE, SAME_SITE)]
ins = [numpy.zeros(2, dtype="i") for _ in range(2)]
in_requests = [comm.Irecv([ins[0], MPI.INT], source=OTHER_SITE, tag=11), comm.Irecv([ins[1], MPI.INT], source=SAME_SITE, tag=11)]
MPI.Request.Waitall(outs + in_requests)
note(f"waitall: {ins[0].tolist()} {ins[1].tolist()}")

# Collectives, on COMM_WORLD and on a split that spans the sites (ranks 0,2 and 1,3).
note(f"bcast: {comm.bcast({'root': 'says hello'} if rank == 1 else None, root=1)}")
total = numpy.zeros(3, dtype="d")
comm.Allreduce(numpy.array([rank, rank * rank, 1.5], dtype="d"), total, op=MPI.SUM)
note(f"allreduce: {total.tolist()}")
gathered = comm.gather(rank * rank, root=2)
if rank == 2:
    note(f"gather at 2: {gathered}")
everyone = numpy.zeros(4, dtype="i")
comm.Allgather(numpy.array([rank + 40], dtype="i"), everyone)
note(f"allgather: {everyone.tolist()}")
exchanged = numpy.zeros(4, dtype="i")
comm.Alltoall(numpy.arange(4, dtype="i") + 10 * rank, exchanged)
note(f"alltoall: {exchanged.tolist()}")
prefix = numpy.zeros(1, dtype="i")
comm.Scan(numpy.array([rank + 1], dtype="i"), prefix, op=MPI.SUM)
note(f"scan: {prefix.tolist()}")
split = comm.Split(rank % 2, rank)
note(f"split {rank % 2}: rank {split.Get_rank()} of {split.Get_size()}, sum {split.allreduce(rank)}")
split.Send([numpy.array([rank], dtype="i"), MPI.INT], dest=1 - split.Get_rank(), tag=12)
partner = numpy.zeros(1, dtype="i")
split.Recv([partner, MPI.INT], source=MPI.ANY_SOURCE, tag=12)
note(f"split partner: {partner.tolist()}")
split.Free()
comm.Barrier()

everything = comm.gather(lines, root=0)
if rank == 0:
    for rank_lines in everything:
        for line in rank_lines:
            print(line)
    print("done")
