//! What several fuzz targets check alike.

use serde_json::Value;

/// Fails where `written` (what a reader made of `given`, written back) has
/// an object and `given` has an array there: a struct read from the array
/// of its field values, bound by position past every field name. Does
/// nothing unless both texts are JSON.
pub fn no_object_read_from_an_array(given: &str, written: &str) {
    if let (Ok(given), Ok(written)) = (
        serde_json::from_str::<Value>(given),
        serde_json::from_str::<Value>(written),
    ) {
        compare(&given, &written, "");
    }
}

fn compare(given: &Value, written: &Value, path: &str) {
    match (given, written) {
        (Value::Array(_), Value::Object(_)) => {
            panic!("{path}: an object read from an array")
        }
        (Value::Object(given), Value::Object(written)) => {
            for (key, value) in given {
                if let Some(found) = written.get(key) {
                    compare(value, found, &format!("{path}.{key}"));
                }
            }
        }
        (Value::Array(given), Value::Array(written)) => {
            for (i, (value, found)) in given.iter().zip(written).enumerate() {
                compare(value, found, &format!("{path}[{i}]"));
            }
        }
        _ => {}
    }
}
