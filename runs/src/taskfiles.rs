//! Reading task files from disk: a file, or a folder's `*.json` files in
//! name order, checked for size before they are read, then validated by
//! [`toolenv_domains::taskfile`] (which reads no file itself).

use std::path::Path;

use toolenv_domains::taskfile::{LoadError, MAX_FILE_BYTES, MAX_FILES, TaskSet};

/// Reads and validates the tasks of a file or folder (`--tasks PATH`):
/// every task, or the first problem and none. A
/// [`toolenv_domains::taskfile::Catalogue`] then serves them.
pub fn read(path: &Path) -> Result<TaskSet, LoadError> {
    let name = path.display().to_string();
    let io = |path: &Path, e: std::io::Error| LoadError::file(&path.display().to_string(), format!("cannot read: {e}"));
    let meta = std::fs::metadata(path).map_err(|e| io(path, e))?;
    let paths = if meta.is_dir() {
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| io(path, e))? {
            let entry = entry.map_err(|e| io(path, e))?;
            let file = entry.path();
            if file.extension().is_some_and(|x| x == "json") && file.is_file() {
                paths.push(file);
            }
            if paths.len() > MAX_FILES {
                return Err(LoadError::file(&name, format!("more than {MAX_FILES} task files")));
            }
        }
        paths.sort();
        if paths.is_empty() {
            return Err(LoadError::file(&name, "no task file (*.json) in this folder"));
        }
        paths
    } else {
        vec![path.to_path_buf()]
    };
    let mut files = Vec::new();
    for file in paths {
        let shown = file.display().to_string();
        let bytes = std::fs::metadata(&file).map_err(|e| io(&file, e))?.len();
        if bytes > MAX_FILE_BYTES as u64 {
            return Err(LoadError::file(&shown, format!("{bytes} bytes; a task file holds at most {MAX_FILE_BYTES}")));
        }
        let text = std::fs::read(&file).map_err(|e| io(&file, e))?;
        let text = String::from_utf8(text).map_err(|e| LoadError::file(&shown, format!("not UTF-8 text: {e}")))?;
        files.push((shown, text));
    }
    TaskSet::parse(&name, &files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_huge_empty_and_binary_paths_give_one_error_each() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read(&dir.path().join("nope.json")).unwrap_err();
        assert!(missing.to_string().contains("cannot read"), "{missing}");
        let empty = read(dir.path()).unwrap_err();
        assert!(empty.to_string().contains("no task file"), "{empty}");
        let huge = dir.path().join("huge.json");
        std::fs::write(&huge, vec![b' '; 10 << 20]).unwrap();
        let error = read(&huge).unwrap_err();
        assert!(error.to_string().contains("a task file holds at most"), "{error}");
        let binary = dir.path().join("binary.json");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        std::fs::remove_file(&huge).unwrap();
        let error = read(dir.path()).unwrap_err();
        assert!(error.to_string().contains("binary.json: not UTF-8"), "{error}");
    }
}
