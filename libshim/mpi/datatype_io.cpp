#include "datatype_io.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace lp::mpi {

namespace {

// Whole elements per PMPI_Pack / PMPI_Unpack call: their byte counts are int.
MPI_Count elements_per_call(const TypeShape& shape) {
  return shape.size > 0 ? std::max<MPI_Count>(1, INT_MAX / shape.size) : INT_MAX;
}

// Whether a type without holes (lower bound 0, extent = size) lays its data out in packing order.
bool in_order(MPI_Datatype type) {
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return true;
  if (combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP) return false;
  if (datatypes != 1 || integers > 1 || addresses != 0) return false;
  int count[1] = {0};
  MPI_Datatype inner = MPI_DATATYPE_NULL;
  PMPI_Type_get_contents(type, integers, 0, 1, count, nullptr, &inner);
  const bool inner_flat = shape_of(inner).flat;
  int inner_integers = 0, inner_addresses = 0, inner_datatypes = 0, inner_combiner = 0;
  PMPI_Type_get_envelope(inner, &inner_integers, &inner_addresses, &inner_datatypes, &inner_combiner);
  if (inner_combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&inner);  // get_contents made a new handle
  return inner_flat;
}

}  // namespace

TypeShape shape_of(MPI_Datatype type) {
  TypeShape shape;
  PMPI_Type_size_x(type, &shape.size);
  MPI_Aint lower = 0;
  PMPI_Type_get_extent(type, &lower, &shape.extent);
  shape.flat = lower == 0 && shape.extent == shape.size && in_order(type);  // else holes, or resized
  return shape;
}

void pack_elements(const void* buffer, MPI_Datatype type, const TypeShape& shape, MPI_Count first,
                   MPI_Count elements, std::byte* out, MPI_Comm comm) {
  if (shape.size > INT_MAX) throw SendError(MPI_ERR_TYPE, "an element of 2 GiB or more cannot be packed");
  const MPI_Count per_call = elements_per_call(shape);
  for (MPI_Count done = 0; done < elements;) {
    const MPI_Count take = std::min(per_call, elements - done);
    const int bytes = static_cast<int>(take * shape.size);
    int position = 0;
    const int rc = PMPI_Pack(element_address(buffer, first + done, shape.extent), static_cast<int>(take), type,
                             out, bytes, &position, comm);
    if (rc != MPI_SUCCESS) throw SendError(rc, "cannot pack the message");
    if (position != bytes) throw SendError(MPI_ERR_INTERN, "packed size differs from the type's size");
    out += bytes;
    done += take;
  }
}

PackedCopy::PackedCopy(const void* buffer, int count, MPI_Datatype type, MPI_Comm comm) {
  const TypeShape shape = shape_of(type);
  if (shape.size > INT_MAX) throw SendError(MPI_ERR_TYPE, "an element of 2 GiB or more cannot be packed");
  bytes_.resize(static_cast<std::size_t>(shape.size) * static_cast<std::size_t>(std::max(count, 0)));
  pack_elements(buffer, type, shape, 0, std::max(count, 0), bytes_.data(), comm);
  PMPI_Type_contiguous(static_cast<int>(shape.size), MPI_BYTE, &type_);
  PMPI_Type_commit(&type_);
}

PackedCopy::~PackedCopy() {
  if (type_ != MPI_DATATYPE_NULL) PMPI_Type_free(&type_);
}

int unpack_data(const std::byte* data, std::size_t bytes, void* buffer, MPI_Datatype type, const TypeShape& shape,
                MPI_Comm comm) {
  if (bytes == 0) return MPI_SUCCESS;
  if (shape.flat) {
    std::memcpy(buffer, data, bytes);
    return MPI_SUCCESS;
  }
  const auto size = static_cast<std::size_t>(shape.size);
  const auto elements = static_cast<MPI_Count>(bytes / size);
  const std::size_t rest = bytes % size;
  const MPI_Count per_call = elements_per_call(shape);
  for (MPI_Count done = 0; done < elements;) {
    const MPI_Count take = std::min(per_call, elements - done);
    int position = 0;
    const int rc = PMPI_Unpack(data + static_cast<std::size_t>(done) * size, static_cast<int>(take * shape.size),
                               &position, const_cast<void*>(element_address(buffer, done, shape.extent)),
                               static_cast<int>(take), type, comm);
    if (rc != MPI_SUCCESS) return rc;
    done += take;
  }
  if (rest == 0) return MPI_SUCCESS;
  // A partial last element: its received bytes land, the rest of it keeps what was there (as Open
  // MPI does): pack the element as it is, overwrite the received prefix, unpack.
  void* element = const_cast<void*>(element_address(buffer, elements, shape.extent));
  int packed_size = 0;
  PMPI_Pack_size(1, type, comm, &packed_size);
  std::vector<std::byte> scratch(static_cast<std::size_t>(packed_size));
  int position = 0;
  PMPI_Pack(element, 1, type, scratch.data(), packed_size, &position, comm);
  std::memcpy(scratch.data(), data + (bytes - rest), rest);
  position = 0;
  return PMPI_Unpack(scratch.data(), packed_size, &position, element, 1, type, comm);
}

}  // namespace lp::mpi
