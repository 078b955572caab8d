//! A lean reader of the Arrow IPC streams cellscope writes: flat tables of UTF-8 (plain or dictionary-encoded
//! with 32-bit signed keys), unsigned 32- and 64-bit integer, 64-bit float and boolean columns, uncompressed.
//!
//! The browser decodes the cells and request rows with it. Arrow's own record-batch decoder builds every column
//! through `make_array`, which links every Arrow array type and its validation into the WASM (about a tenth of
//! the bundle) for four column types. Anything outside those four is refused with an error naming the column,
//! never misread; arrow's reader ([`super::read_ipc_stream`]) is the oracle the tests compare this one with.

use arrow_ipc::{MessageHeader, Precision, Type};
use arrow_schema::ArrowError;

fn error(message: String) -> ArrowError {
    ArrowError::IpcError(message)
}

/// Walks the messages of an IPC stream: for each, its flatbuffer header and its body bytes.
fn each_message(
    bytes: &[u8],
    mut visit: impl FnMut(arrow_ipc::Message<'_>, &[u8]) -> Result<(), ArrowError>,
) -> Result<(), ArrowError> {
    let truncated = |what: &str| error(format!("the IPC stream ends inside {what}"));
    let mut rest = bytes;
    let mut take = |length: usize, what: &str| -> Result<&[u8], ArrowError> {
        if rest.len() < length {
            return Err(truncated(what));
        }
        let (head, tail) = rest.split_at(length);
        rest = tail;
        Ok(head)
    };
    let length_of = |word: &[u8]| i32::from_le_bytes([word[0], word[1], word[2], word[3]]);
    loop {
        // Each message: an optional 0xFFFFFFFF continuation marker, the metadata length (0 ends the stream),
        // the flatbuffer metadata, then the body. A stream may also simply end after a message.
        let Ok(word) = take(4, "a message length") else {
            return Ok(());
        };
        let mut length = length_of(word);
        if length == -1 {
            length = length_of(take(4, "a message length")?);
        }
        if length == 0 {
            return Ok(());
        }
        let length = usize::try_from(length)
            .map_err(|_| error(format!("negative IPC message length {length}")))?;
        let metadata = take(length, "a message header")?;
        let message = arrow_ipc::root_as_message(metadata)
            .map_err(|problem| error(format!("unreadable IPC message: {problem}")))?;
        let body_length = usize::try_from(message.bodyLength())
            .map_err(|_| error(format!("bad IPC body length {}", message.bodyLength())))?;
        let body = take(body_length, "a message body")?;
        visit(message, body)?;
    }
}

/// The column types this reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    /// UTF-8 values sent once in the dictionary batch `id`, the rows holding 32-bit keys into it.
    DictionaryText {
        id: i64,
    },
    UInt32,
    UInt64,
    Float64,
    Boolean,
}

/// Which rows hold a value: `None` when every row does (the writer then sends no bitmap).
#[derive(Clone, Debug, Default, PartialEq)]
struct Validity(Option<Vec<u8>>);

impl Validity {
    fn is_null(&self, row: usize) -> bool {
        self.0.as_ref().is_some_and(|bits| {
            bits.get(row / 8)
                .is_none_or(|byte| byte & (1 << (row % 8)) == 0)
        })
    }
}

/// A UTF-8 column: every value checked to be text when it was read.
#[derive(Clone, Debug, PartialEq)]
pub struct TextColumn {
    validity: Validity,
    /// Where each text starts and ends in `values`: one text per row, or per dictionary entry when `keys` is set.
    offsets: Vec<usize>,
    values: String,
    /// For a dictionary-encoded column, each row's entry (checked to lie in the dictionary unless the row is null).
    keys: Option<Vec<u32>>,
}

impl TextColumn {
    /// Whether `row` is null.
    pub fn is_null(&self, row: usize) -> bool {
        self.validity.is_null(row)
    }

    /// The text at `row` (empty for a null row).
    pub fn value(&self, row: usize) -> &str {
        let entry = match &self.keys {
            Some(keys) => match keys.get(row) {
                Some(key) => *key as usize,
                None => return "",
            },
            None => row,
        };
        match (self.offsets.get(entry), self.offsets.get(entry + 1)) {
            (Some(start), Some(end)) => self.values.get(*start..*end).unwrap_or(""),
            _ => "",
        }
    }

    /// How many texts the column holds: its rows, or its dictionary's entries.
    fn entries(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
}

/// A column of fixed-width values.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueColumn<T> {
    validity: Validity,
    values: Vec<T>,
}

impl<T: Copy + Default> ValueColumn<T> {
    /// Whether `row` is null.
    pub fn is_null(&self, row: usize) -> bool {
        self.validity.is_null(row)
    }

    /// The value at `row` (the type's default for a null row).
    pub fn value(&self, row: usize) -> T {
        self.values.get(row).copied().unwrap_or_default()
    }

    /// The value at `row`, `None` when it is null.
    pub fn get(&self, row: usize) -> Option<T> {
        (!self.is_null(row)).then(|| self.value(row))
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Column {
    Text(TextColumn),
    UInt32(ValueColumn<u32>),
    UInt64(ValueColumn<u64>),
    Float64(ValueColumn<f64>),
    Boolean(ValueColumn<bool>),
}

/// One record batch: its row count and its columns by name.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// How many rows the batch holds.
    pub rows: usize,
    columns: Vec<(String, Column)>,
}

impl Table {
    fn column(&self, name: &str) -> Option<&Column> {
        self.columns
            .iter()
            .find(|(column, _)| column == name)
            .map(|(_, column)| column)
    }

    /// The column `name` when it holds text; `None` when absent or of another type.
    pub fn text(&self, name: &str) -> Option<&TextColumn> {
        match self.column(name)? {
            Column::Text(column) => Some(column),
            _ => None,
        }
    }

    /// The column `name` when it holds `u32` values; `None` when absent or of another type.
    pub fn uint32(&self, name: &str) -> Option<&ValueColumn<u32>> {
        match self.column(name)? {
            Column::UInt32(column) => Some(column),
            _ => None,
        }
    }

    /// The column `name` when it holds `u64` values; `None` when absent or of another type.
    pub fn uint64(&self, name: &str) -> Option<&ValueColumn<u64>> {
        match self.column(name)? {
            Column::UInt64(column) => Some(column),
            _ => None,
        }
    }

    /// The column `name` when it holds `f64` values; `None` when absent or of another type.
    pub fn float64(&self, name: &str) -> Option<&ValueColumn<f64>> {
        match self.column(name)? {
            Column::Float64(column) => Some(column),
            _ => None,
        }
    }

    /// The column `name` when it holds booleans; `None` when absent or of another type.
    pub fn boolean(&self, name: &str) -> Option<&ValueColumn<bool>> {
        match self.column(name)? {
            Column::Boolean(column) => Some(column),
            _ => None,
        }
    }
}

/// The kind of one schema field, or why this reader does not read it.
fn kind_of(field: &arrow_ipc::Field<'_>, name: &str) -> Result<Kind, ArrowError> {
    let unsupported = || {
        error(format!(
            "column `{name}` has a type ({:?}) outside cellscope's tables",
            field.type_type()
        ))
    };
    if let Some(encoding) = field.dictionary() {
        let signed_32 = encoding
            .indexType()
            .is_some_and(|index| index.is_signed() && index.bitWidth() == 32);
        if !signed_32 || field.type_type() != Type::Utf8 {
            return Err(error(format!(
                "column `{name}`: only text dictionaries with 32-bit signed keys are part of cellscope's tables"
            )));
        }
        return Ok(Kind::DictionaryText { id: encoding.id() });
    }
    if field
        .children()
        .is_some_and(|children| !children.is_empty())
    {
        return Err(unsupported());
    }
    match field.type_type() {
        Type::Utf8 => Ok(Kind::Text),
        Type::Bool => Ok(Kind::Boolean),
        Type::Int => match field.type_as_int() {
            Some(int) if !int.is_signed() && int.bitWidth() == 32 => Ok(Kind::UInt32),
            Some(int) if !int.is_signed() && int.bitWidth() == 64 => Ok(Kind::UInt64),
            _ => Err(unsupported()),
        },
        Type::FloatingPoint => match field.type_as_floating_point() {
            Some(float) if float.precision() == Precision::DOUBLE => Ok(Kind::Float64),
            _ => Err(unsupported()),
        },
        _ => Err(unsupported()),
    }
}

/// Reads the buffers of one record batch, in the order the IPC format lays them out.
struct Buffers<'a> {
    body: &'a [u8],
    specs: Vec<(usize, usize)>,
    next: usize,
}

impl<'a> Buffers<'a> {
    fn take(&mut self, name: &str) -> Result<&'a [u8], ArrowError> {
        let (offset, length) = *self
            .specs
            .get(self.next)
            .ok_or_else(|| error(format!("column `{name}`: the batch has too few buffers")))?;
        self.next += 1;
        offset
            .checked_add(length)
            .and_then(|end| self.body.get(offset..end))
            .ok_or_else(|| error(format!("column `{name}`: a buffer lies outside the body")))
    }

    fn validity(&mut self, name: &str, rows: usize, nulls: usize) -> Result<Validity, ArrowError> {
        let bits = self.take(name)?;
        if nulls == 0 {
            return Ok(Validity(None));
        }
        if bits.len() < rows.div_ceil(8) {
            return Err(error(format!(
                "column `{name}`: its validity bitmap is short"
            )));
        }
        Ok(Validity(Some(bits.to_vec())))
    }
}

/// `rows` little-endian values of `WIDTH` bytes each from `bytes`.
fn values<const WIDTH: usize, T>(
    bytes: &[u8],
    rows: usize,
    name: &str,
    from: fn([u8; WIDTH]) -> T,
) -> Result<Vec<T>, ArrowError> {
    let needed = rows
        .checked_mul(WIDTH)
        .filter(|needed| *needed <= bytes.len())
        .ok_or_else(|| error(format!("column `{name}`: its values are short")))?;
    Ok(bytes[..needed]
        .chunks_exact(WIDTH)
        .map(|chunk| {
            let mut word = [0u8; WIDTH];
            word.copy_from_slice(chunk);
            from(word)
        })
        .collect())
}

/// The dictionaries of a stream so far, by id: a list, as a table has a handful (a hash map would add its
/// hashing to the WASM for nothing).
type Dictionaries = Vec<(i64, TextColumn)>;

fn column(
    kind: Kind,
    name: &str,
    rows: usize,
    nulls: usize,
    buffers: &mut Buffers<'_>,
    dictionaries: &Dictionaries,
) -> Result<Column, ArrowError> {
    let validity = buffers.validity(name, rows, nulls)?;
    Ok(match kind {
        Kind::Text => Column::Text(text_column(validity, name, rows, buffers)?),
        Kind::DictionaryText { id } => {
            let dictionary = dictionaries
                .iter()
                .find(|(known, _)| *known == id)
                .map(|(_, dictionary)| dictionary)
                .ok_or_else(|| {
                    error(format!(
                        "column `{name}`: its dictionary was not sent before the batch"
                    ))
                })?;
            let keys = values::<4, i32>(buffers.take(name)?, rows, name, i32::from_le_bytes)?;
            let keys: Vec<u32> = keys
                .into_iter()
                .enumerate()
                .map(|(row, key)| match u32::try_from(key) {
                    Ok(key) if (key as usize) < dictionary.entries() => Some(key),
                    // A null row's key is never read; writers leave any value there.
                    _ if validity.is_null(row) => Some(0),
                    _ => None,
                })
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    error(format!(
                        "column `{name}`: a key lies outside its dictionary"
                    ))
                })?;
            Column::Text(TextColumn {
                validity,
                offsets: dictionary.offsets.clone(),
                values: dictionary.values.clone(),
                keys: Some(keys),
            })
        }
        Kind::UInt32 => Column::UInt32(ValueColumn {
            validity,
            values: values::<4, u32>(buffers.take(name)?, rows, name, u32::from_le_bytes)?,
        }),
        Kind::UInt64 => Column::UInt64(ValueColumn {
            validity,
            values: values::<8, u64>(buffers.take(name)?, rows, name, u64::from_le_bytes)?,
        }),
        Kind::Float64 => Column::Float64(ValueColumn {
            validity,
            values: values::<8, f64>(buffers.take(name)?, rows, name, f64::from_le_bytes)?,
        }),
        Kind::Boolean => {
            let bits = buffers.take(name)?;
            if bits.len() < rows.div_ceil(8) {
                return Err(error(format!("column `{name}`: its values are short")));
            }
            Column::Boolean(ValueColumn {
                validity,
                values: (0..rows)
                    .map(|row| bits[row / 8] & (1 << (row % 8)) != 0)
                    .collect(),
            })
        }
    })
}

/// A plain UTF-8 column: its offsets and text, checked.
fn text_column(
    validity: Validity,
    name: &str,
    rows: usize,
    buffers: &mut Buffers<'_>,
) -> Result<TextColumn, ArrowError> {
    let offsets = values::<4, i32>(buffers.take(name)?, rows + 1, name, i32::from_le_bytes)?;
    let data = buffers.take(name)?;
    let offsets: Vec<usize> = offsets
        .into_iter()
        .map(|offset| {
            usize::try_from(offset)
                .ok()
                .filter(|offset| *offset <= data.len())
        })
        .collect::<Option<_>>()
        .ok_or_else(|| error(format!("column `{name}`: an offset lies outside its text")))?;
    let first = offsets.first().copied().unwrap_or(0);
    let last = offsets.last().copied().unwrap_or(0);
    let text = std::str::from_utf8(data.get(first..last).unwrap_or_default())
        .map_err(|_| error(format!("column `{name}`: its text is not UTF-8")))?;
    // Offsets relative to the checked text; each must fall between characters and never go back.
    let offsets: Vec<usize> = offsets.iter().map(|offset| offset - first).collect();
    let in_order = offsets.windows(2).all(|pair| pair[0] <= pair[1]);
    if !in_order || !offsets.iter().all(|offset| text.is_char_boundary(*offset)) {
        return Err(error(format!(
            "column `{name}`: an offset splits a character or goes back"
        )));
    }
    Ok(TextColumn {
        validity,
        offsets,
        values: text.to_string(),
        keys: None,
    })
}

/// A record batch's row count, each column's row and null counts, and its buffers.
type BatchParts<'a> = (usize, Vec<(usize, usize)>, Buffers<'a>);

/// The [`BatchParts`] of a record batch (of a table, or of a dictionary) from its header and body.
fn batch_parts<'a>(
    header: arrow_ipc::RecordBatch<'_>,
    body: &'a [u8],
) -> Result<BatchParts<'a>, ArrowError> {
    if header.compression().is_some() {
        return Err(error(
            "compressed record batches are not part of cellscope's streams".into(),
        ));
    }
    let rows = usize::try_from(header.length())
        .map_err(|_| error(format!("bad row count {}", header.length())))?;
    // A negative length, count or offset reads as too large, so the bounds checks that follow refuse it.
    let size = |value: i64| usize::try_from(value).unwrap_or(usize::MAX);
    let nodes: Vec<(usize, usize)> = header
        .nodes()
        .iter()
        .flatten()
        .map(|node| (size(node.length()), size(node.null_count())))
        .collect();
    let buffers = Buffers {
        body,
        specs: header
            .buffers()
            .iter()
            .flatten()
            .map(|buffer| (size(buffer.offset()), size(buffer.length())))
            .collect(),
        next: 0,
    };
    Ok((rows, nodes, buffers))
}

/// The record batches of an IPC stream, each as a [`Table`].
pub fn read_tables(bytes: &[u8]) -> Result<Vec<Table>, ArrowError> {
    let mut schema: Option<Vec<(String, Kind)>> = None;
    let mut dictionaries = Dictionaries::new();
    let mut tables = Vec::new();
    each_message(bytes, |message, body| {
        match message.header_type() {
            MessageHeader::Schema => {
                let header = message
                    .header_as_schema()
                    .ok_or_else(|| error("a schema message without its schema".into()))?;
                let mut fields = Vec::new();
                for field in header.fields().iter().flatten() {
                    let name = field.name().unwrap_or_default().to_string();
                    let kind = kind_of(&field, &name)?;
                    fields.push((name, kind));
                }
                schema = Some(fields);
            }
            MessageHeader::DictionaryBatch => {
                let fields = schema
                    .as_ref()
                    .ok_or_else(|| error("a dictionary batch before the schema".into()))?;
                let header = message
                    .header_as_dictionary_batch()
                    .ok_or_else(|| error("a dictionary batch message without its batch".into()))?;
                let id = header.id();
                let name = fields
                    .iter()
                    .find(|(_, kind)| *kind == Kind::DictionaryText { id })
                    .map(|(name, _)| name.as_str())
                    .ok_or_else(|| error(format!("dictionary {id} belongs to no column")))?;
                // cellscope writes each dictionary whole (a new batch replaces it); deltas are refused, not
                // misread.
                if header.isDelta() {
                    return Err(error(format!(
                        "column `{name}`: dictionary deltas are not part of cellscope's streams"
                    )));
                }
                let data = header.data().ok_or_else(|| {
                    error(format!("column `{name}`: a dictionary batch without data"))
                })?;
                let (entries, nodes, mut buffers) = batch_parts(data, body)?;
                if nodes != [(entries, 0)] {
                    return Err(error(format!(
                        "column `{name}`: a dictionary must be one column of texts without nulls"
                    )));
                }
                let validity = buffers.validity(name, entries, 0)?;
                let dictionary = text_column(validity, name, entries, &mut buffers)?;
                dictionaries.retain(|(known, _)| *known != id);
                dictionaries.push((id, dictionary));
            }
            MessageHeader::RecordBatch => {
                let fields = schema
                    .as_ref()
                    .ok_or_else(|| error("a record batch before the schema".into()))?;
                let header = message
                    .header_as_record_batch()
                    .ok_or_else(|| error("a record batch message without its batch".into()))?;
                let (rows, nodes, mut buffers) = batch_parts(header, body)?;
                if nodes.len() != fields.len() {
                    return Err(error(format!(
                        "a record batch of {} columns for a schema of {}",
                        nodes.len(),
                        fields.len()
                    )));
                }
                let mut columns = Vec::with_capacity(fields.len());
                for ((name, kind), (length, nulls)) in fields.iter().zip(nodes) {
                    if length != rows {
                        return Err(error(format!(
                            "column `{name}` has {length} rows in a batch of {rows}"
                        )));
                    }
                    columns.push((
                        name.clone(),
                        column(*kind, name, rows, nulls, &mut buffers, &dictionaries)?,
                    ));
                }
                tables.push(Table { rows, columns });
            }
            other => {
                return Err(error(format!(
                    "unexpected IPC message {other:?} in a stream"
                )));
            }
        }
        Ok(())
    })?;
    Ok(tables)
}
